"""TensorFlow: the import (:mod:`.tfimport`), building a case implementation
(:mod:`.build`), the derivative methods and modes (:mod:`.derivatives`), the evaluation of a
case (:mod:`.evaluate`), gradient traces (:mod:`.gradient_trace`) and standalone
reproduction scripts (:mod:`.repro`)."""
