"""The orchestration layer (layer 6), Hudi's write client: routes an operation (write, bootstrap,
compact) to its pipeline and runs the post-commit table services."""
