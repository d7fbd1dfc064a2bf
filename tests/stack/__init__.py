"""The running stack as ``make run`` starts it: its supervisor, processes and broker."""
