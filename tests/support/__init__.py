"""What every room's tests share: personas and data (``factories``), fixtures, and the
sandbox and simulated seller as processes."""
