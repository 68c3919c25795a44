"""Case files: the JSON Schema (:mod:`.schema`), YAML with line numbers
(:mod:`.yaml_lines`), the expression language (:mod:`.expressions`), the case model
(:mod:`.model`), loading and validation (:mod:`.load`), and the points of a sweep
(:mod:`.points`)."""
