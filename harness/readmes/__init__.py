"""README tables of figures, rendered from the committed result files between markers."""
