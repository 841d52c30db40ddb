"""What training is, independent of where data comes from and of who asks for it: the query
collection (:mod:`.collection`), the training parameters (:mod:`.params`, :mod:`.options`), the
structured-output plugins (:mod:`.plugins`), the one training driver (:mod:`.training`),
feature normalisation (:mod:`.normalize`), model selection (:mod:`.selection`), the measure
registry (:mod:`.measures`), query groups (:mod:`.groups`), the estimators' shared base
(:mod:`.base`), interrupts (:mod:`.interrupts`) and the progress display (:mod:`.progress`)."""
