"""TGB / TGB 2.0 datasets in tgbhub: what upstream publishes and what an import of it must reproduce."""
