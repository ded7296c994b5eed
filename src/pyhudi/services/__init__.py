"""Table services: compaction, clustering, clean, archival; scheduled inline, async or standalone."""
