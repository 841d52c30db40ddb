"""The option values and the error types of svmstruct_api that callers name without
importing the solvers (numpy, cvxopt): a command line validates its arguments with these
before anything heavy is loaded."""

#: the cutting-plane formulations (svmstruct_api.learner)
FORMULATIONS = ("n-slack", "1-slack")
#: the QP-solver choices users name (the command line, the estimators): "smo" is the default
#: order of trial (active set, SMO, cvxopt), "cvxopt" cvxopt alone (svmstruct_api.solvers,
#: TRIAL_ORDER); the learners also take any name of svmstruct_api.solvers.REGISTRY
QP_SOLVERS = ("smo", "cvxopt")


class QPError(RuntimeError):
    """cvxopt could not solve the working-set QP, even after regularising."""


class NonFiniteObjective(ArithmeticError):
    """The primal objective of an oracle pass overflowed (feature values or C too large)."""
