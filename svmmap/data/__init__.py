"""Reading and writing ranking data and what goes with it: the SVMlight / LETOR reader
(:mod:`.io`, the loader API; :mod:`.file_reader` and :mod:`.line_parser` behind it), where the
bytes come from (:mod:`.sources`), group and query-weights files (:mod:`.side_files`), the writer
(:mod:`.writer`), model files (:mod:`.model_file`), TREC runs and qrels (:mod:`.trec_run`) and
atomic output files (:mod:`.atomic`)."""
