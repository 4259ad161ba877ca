"""Tasks: what a dataset's manifest declares (:mod:`~tgbhub.tasks.declared`), the registry of tasks a dataset can
declare without a new data version (:mod:`~tgbhub.tasks.specs`) and their own versioned documents
(:mod:`~tgbhub.tasks.documents`). Pure: no I/O beyond reading a task document."""
