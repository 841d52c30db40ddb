"""The SVMstruct API in Python: a plugin interface and cutting-plane learners."""
