"""TGB releases imported as datasets of this project: read with py-tgb 2.3.0's conventions, converted, checked."""
