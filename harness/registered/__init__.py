"""The Python code a case may name: implementations and references registered by
name (:mod:`.register`), the ones this package ships (:mod:`.seeds`), and the lookup a case
goes through (:mod:`.catalogue`)."""
