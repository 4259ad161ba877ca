"""Results: records anyone can re-check (:mod:`~tgbhub.results.records`), submissions pushed to a hub
(:mod:`~tgbhub.results.submissions`), the grader that turns them into records, rejections and boards
(:mod:`~tgbhub.results.grader`, :mod:`~tgbhub.results.ranking`, :mod:`~tgbhub.results.outcomes`) and the boards for
their readers (:mod:`~tgbhub.results.leaderboards`)."""
