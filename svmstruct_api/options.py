"""The option values and the error types of svmstruct_api that callers name without
importing the solvers (numpy, cvxopt): a command line validates its arguments with these
before anything heavy is loaded."""

#: the cutting-plane formulations (svmstruct_api.learner)
FORMULATIONS = ("n-slack", "1-slack")
#: the working-set QP solvers (svmstruct_api.qp.WorkingSet)
QP_SOLVERS = ("smo", "cvxopt")


class QPError(RuntimeError):
    """cvxopt could not solve the working-set QP, even after regularising."""


class NonFiniteObjective(ArithmeticError):
    """The primal objective of an oracle pass overflowed (feature values or C too large)."""
