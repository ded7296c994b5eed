"""Pure bytes <-> model codecs (layer 2): log blocks, timeline files, properties, HFile, bloom."""
