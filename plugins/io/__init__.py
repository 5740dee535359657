"""Reading and writing files: importers and exporters."""
