"""The conformance kit: vectors, the adapter protocol, conform, serve-model and the mutant adapters."""
