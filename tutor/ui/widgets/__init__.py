"""The drill screen's widgets, one per file."""
