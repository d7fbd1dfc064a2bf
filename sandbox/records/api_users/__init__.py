"""Platform accounts, API users with their two-factor codes and named API tokens, and the
outbox the platform's e-mails land in."""
