"""Results: records anyone can re-check (:mod:`~tgbhub.results.records`), submissions pushed to a hub
(:mod:`~tgbhub.results.submissions`) and the leaderboards graded from them (:mod:`~tgbhub.results.leaderboards`)."""
