"""Column writers of the result set loader, one module per shape."""
