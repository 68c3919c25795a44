"""Root causes: the mechanisms behind the findings (localised to a primitive, a rule, a
mode, a method, a framework or the formula itself), each stated once with its scope."""
