"""The command-line tools, one module per command, each with a ``*_main(argv=None)`` that
returns the exit status:

    svmmap.commands.learn              svmmap_learn
    svmmap.commands.classify           svmmap_classify
    svmmap.commands.baseline_learn     svmmap_baseline_learn
    svmmap.commands.baseline_classify  svmmap_baseline_classify

and svmmap.commands.common, what they share (the error policy, the shared options).  The
installed scripts enter through svmmap.commands.console, which catches Ctrl-C from the first import.
Importing this package imports nothing; a command module loads no numpy, scipy or
scikit-learn before its arguments are parsed.
"""
