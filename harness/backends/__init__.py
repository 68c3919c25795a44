"""The frameworks whose derivatives are judged, one subpackage each."""
