"""A platform account's databases and their product rows, and who may reach them."""
