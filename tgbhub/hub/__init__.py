"""The hub side: how a family is laid out as a Hugging Face dataset repo, the publish targets, the local Hub server."""
