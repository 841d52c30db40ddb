"""scikit-learn's parameter manners for every svmmap estimator: the constructor's keyword
arguments are the parameters, read with ``get_params`` and changed with ``set_params``."""

import inspect


class ParamsMixin:
    """get_params / set_params / repr from the signature of the subclass's ``__init__``."""

    @classmethod
    def _param_names(cls):
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in self._param_names():
                raise ValueError(f"unknown parameter {name!r} for {type(self).__name__}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = inspect.signature(type(self).__init__).parameters
        changed = {k: v for k, v in self.get_params().items() if v != defaults[k].default}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"
