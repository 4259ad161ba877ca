"""TLPCF (Rahman, Modell, Coon): temporally distorted test splits, the counterfactual sanity check's data."""
