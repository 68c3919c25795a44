"""PyTorch: building a case implementation (:mod:`.build`), the derivative methods and
modes (:mod:`.derivatives`) and the back end (:mod:`.backend`). Importing
:mod:`.backend` imports PyTorch."""
