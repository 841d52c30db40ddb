"""The warm-started active-set method of the working-set dual (svmstruct_api._active_set)
against cvxopt's primal and dual forms, its warm starts from SMO's and cvxopt's
multipliers, its hand-over to cvxopt, and the learners reaching the same optimum with it."""

import time

import numpy as np
import pytest

import svmstruct_api.solvers as solvers
import svmstruct_api.solvers.active_set as active_set_module
from svmmap.core.collection import QueryCollection
from svmmap.core.plugins import MapPlugin
from svmstruct_api._active_set import ActiveSetStuck, active_set_solve
from svmstruct_api.learner import make_learner
from svmstruct_api.qp import QPTimeout, WorkingSet

from conftest import random_collection

BOUNDS = (1e-3, 1.0, 1e3, 1e5, 1e-9)


def _problem(seed):
    """K > dim(w) + #groups, 1-3 groups, bounds C in BOUNDS
    (times 0.5-2 per group); every third problem repeats one constraint for half the set,
    every other one duplicates a few rows."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 12))
    n_groups = int(rng.integers(1, 4))
    k = int(rng.integers(d + n_groups + 1, 90))
    vectors = rng.normal(size=(k, d)) * rng.uniform(0.01, 3)
    if seed % 3 == 0:
        vectors[: k // 2] = vectors[0]
    if seed % 2 == 0:
        vectors[k // 3: k // 3 + 3] = vectors[1:4]
    losses = rng.uniform(0, 1, k)
    groups = rng.integers(0, n_groups, k)
    groups[:n_groups] = np.arange(n_groups)  # every group holds a constraint
    bounds = BOUNDS[seed % len(BOUNDS)] * rng.uniform(0.5, 2, n_groups)
    return vectors, losses, groups, bounds


def _reference(vectors, losses, groups, bounds):
    """cvxopt's primal and dual forms of the same QP."""
    from svmstruct_api.solvers import cvxopt as cvxopt_solver

    ws = WorkingSet(vectors.shape[1], bounds, solver="cvxopt")
    ws.add(groups, vectors, losses)
    problem = ws.problem()
    return tuple(ws._solution_of(form(problem, 0.0))
                 for form in (cvxopt_solver._solve_primal, cvxopt_solver._solve_dual))


def _solve_in_steps(vectors, losses, groups, bounds, gap, pieces=3):
    """Add the constraints in ``pieces`` batches, solving after each (warm starts)."""
    ws = WorkingSet(vectors.shape[1], bounds)
    cuts = np.linspace(0, len(losses), pieces + 1).astype(int)
    forms = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        ws.add(groups[a:b], vectors[a:b], losses[a:b])
        solution = ws.solve(gap_tolerance=gap)
        forms.append(solution.form)
    return ws, solution, forms


def _check_feasible(solution, groups, bounds):
    assert np.all(solution.alpha >= 0)
    assert np.all(np.bincount(groups, solution.alpha, len(bounds)) <= bounds * (1 + 1e-12))


def _working_set(vectors, losses, groups, bounds, solver):
    ws = WorkingSet(vectors.shape[1], bounds, solver=solver)
    ws.add(groups, vectors, losses)
    return ws


def test_solver_by_the_shape_of_the_problem():
    """SMO while K <= dim(w) + #groups; beyond (G rank-deficient: SMO would crawl) the
    active set with few groups, cvxopt's small primal with many (n-slack)."""
    rng = np.random.default_rng(3)
    many = active_set_module.MAX_GROUPS + 4  # more groups than the active set takes
    k = 2 * many  # K > dim(w) + #groups for every case
    vectors, losses = rng.normal(size=(k, 4)), rng.uniform(0, 1, k)
    for n_groups, form in ((1, "active-set"), (3, "active-set"), (many, "primal")):
        groups = np.arange(k) % n_groups
        solution = _working_set(vectors, losses, groups, np.full(n_groups, 10.0), "smo").solve()
        reference = _working_set(vectors, losses, groups, np.full(n_groups, 10.0),
                                 "cvxopt").solve()
        assert solution.form == form
        assert solution.dual_objective == pytest.approx(reference.dual_objective, rel=1e-8)


    # more groups than the active set takes, K <= dim(w) + #groups: SMO
    n = active_set_module.MAX_GROUPS + 4
    small = _working_set(rng.normal(size=(n, 4)), rng.uniform(0, 1, n), np.arange(n),
                         np.full(n, 10.0), "smo")
    assert small.solve().form == "smo"


def test_the_order_of_trial_decides_which_solver_takes_a_qp(monkeypatch):
    """K <= dim(w) + #groups with few groups: both the active set and SMO apply; the first
    in TRIAL_ORDER (the active set by default: SMO crawls on near-parallel cuts) takes the
    QP, SMO when the table puts it first; both reach cvxopt's optimum."""
    rng = np.random.default_rng(8)
    base = rng.normal(size=20)
    vectors = base + 1e-3 * rng.normal(size=(12, 20))  # near-parallel cuts: ill-conditioned
    losses = rng.uniform(0.5, 1, 12)
    reference = _working_set(vectors, losses, np.zeros(12, int), [100.0], "cvxopt").solve()
    for order, form in ((("active-set", "smo", "cvxopt"), "active-set"),
                        (("smo", "active-set", "cvxopt"), "smo")):
        monkeypatch.setitem(solvers.TRIAL_ORDER, "smo", order)
        solution = _working_set(vectors, losses, np.zeros(12, int), [100.0], "smo").solve()
        assert solution.form == form
        assert solution.dual_objective == pytest.approx(reference.dual_objective, rel=1e-7)


@pytest.mark.parametrize("seed", range(40))
def test_active_set_reaches_the_optimum_of_both_cvxopt_forms(seed):
    vectors, losses, groups, bounds = _problem(seed)
    primal, dual = _reference(vectors, losses, groups, bounds)
    scale = max(1.0, abs(dual.dual_objective))
    gap = 1e-8 * scale
    ws, solution, forms = _solve_in_steps(vectors, losses, groups, bounds, gap)
    assert forms[-1] == "active-set"
    _check_feasible(solution, groups, bounds)
    for reference in (primal, dual):
        assert solution.dual_objective == pytest.approx(reference.dual_objective,
                                                        abs=1e-7 * scale)
    # the certificate: (P) at its w with the exact slacks is within the gap of (D)
    assert solution.primal_objective - solution.dual_objective <= gap * (1 + 1e-6)
    assert solution.primal_objective >= dual.dual_objective - 1e-7 * scale
    np.testing.assert_allclose(ws.slacks(solution.w), solution.slack)


@pytest.mark.parametrize("C", BOUNDS)
def test_every_constraint_repeated(C):
    """Each constraint twice (and a block of identical ones): the KKT systems of the faces
    that hold both copies are singular; the exchanges must keep the faces independent."""
    rng = np.random.default_rng(7)
    base = rng.normal(size=(20, 3))
    vectors = np.vstack([base, base, np.repeat(base[:1], 5, axis=0)])
    losses = np.concatenate([rng.uniform(0, 1, 20)] * 2 + [np.full(5, 0.9)])
    groups = np.zeros(len(losses), dtype=int)
    bounds = np.array([C])
    _, dual = _reference(vectors, losses, groups, bounds)
    scale = max(1.0, abs(dual.dual_objective))
    _, solution, forms = _solve_in_steps(vectors, losses, groups, bounds, 1e-8 * scale)
    assert forms[-1] == "active-set"
    _check_feasible(solution, groups, bounds)
    assert solution.dual_objective == pytest.approx(dual.dual_objective, abs=1e-7 * scale)


@pytest.mark.parametrize("previous", ["smo", "cvxopt"])
def test_warm_start_from_other_solvers_multipliers(previous):
    """SMO's and cvxopt's supports need not be independent (cvxopt's interior point leaves
    every multiplier slightly positive): the face is rebuilt before the method starts."""
    rng = np.random.default_rng(11)
    d = 6
    vectors, losses = rng.normal(size=(40, d)), rng.uniform(0, 1, 40)
    groups = np.zeros(40, dtype=int)
    ws = WorkingSet(d, [100.0], solver=previous)
    ws.add(groups[:30], vectors[:30], losses[:30])
    first = ws.solve()
    assert first.form == ("primal" if previous == "cvxopt" else "active-set")
    ws.solver = "smo"
    ws.add(groups[30:], vectors[30:], losses[30:])
    solution = ws.solve(gap_tolerance=1e-8)
    _, dual = _reference(vectors, losses, groups, np.array([100.0]))
    assert solution.form == "active-set"
    assert solution.dual_objective == pytest.approx(dual.dual_objective, abs=2e-8)


def test_smo_multipliers_as_warm_start(monkeypatch):
    """K crosses dim(w) + 1 during the run: SMO's last multipliers start the active set.
    (SMO put first in the order of trial here, so it takes every QP with K <= dim(w) + 1.)"""
    monkeypatch.setitem(solvers.TRIAL_ORDER, "smo", ("smo", "active-set", "cvxopt"))
    rng = np.random.default_rng(5)
    d = 8
    vectors, losses = rng.normal(size=(30, d)), rng.uniform(0, 1, 30)
    ws = WorkingSet(d, [1000.0])
    forms = []
    for k in range(30):
        ws.add([0], vectors[k:k + 1], losses[k:k + 1])
        forms.append(ws.solve(gap_tolerance=1e-7).form)
    assert forms[d] == "smo" and forms[d + 1:] == ["active-set"] * (29 - d)
    _, dual = _reference(vectors, losses, np.zeros(30, dtype=int), np.array([1000.0]))
    assert ws.solve(gap_tolerance=1e-7).dual_objective == \
        pytest.approx(dual.dual_objective, abs=1e-6)


def test_giving_up_hands_over_to_cvxopt(monkeypatch):
    monkeypatch.setattr(active_set_module, "STEPS_PER_CONSTRAINT", 0)
    monkeypatch.setattr(active_set_module, "MIN_STEPS", 1)
    vectors, losses, groups, bounds = _problem(1)
    ws = WorkingSet(vectors.shape[1], bounds)
    ws.add(groups, vectors, losses)
    solution = ws.solve()
    assert solution.form in ("primal", "dual")
    _, dual = _reference(vectors, losses, groups, bounds)
    assert solution.dual_objective == pytest.approx(dual.dual_objective, rel=1e-6)


def test_non_finite_data_stops_the_method():
    """NaN in the Gram matrix: no comparison holds, every loop must still end."""
    gram = np.full((5, 5), np.nan)
    with pytest.raises(ActiveSetStuck):
        active_set_solve(gram, np.ones(5), np.zeros(5, dtype=np.intp), np.array([1.0]),
                         np.zeros(5), 1e-9, 0.0, 3, 1000)


def test_deadline_and_ctrl_c_inside_the_active_set(monkeypatch):
    vectors, losses, groups, bounds = _problem(2)
    ws = WorkingSet(vectors.shape[1], bounds)
    ws.add(groups, vectors, losses)
    with pytest.raises(QPTimeout):
        ws.solve(deadline=time.perf_counter() - 1.0)
    assert np.all(ws.alpha == 0)  # nothing half-done was kept

    def interrupt(deadline):
        raise KeyboardInterrupt

    monkeypatch.setattr(active_set_module, "check_deadline", interrupt)
    with pytest.raises(KeyboardInterrupt):
        ws.solve(deadline=time.perf_counter() + 60)


@pytest.mark.parametrize("cache_size", [0, 3])
@pytest.mark.parametrize("C", [1e3, 1e5])
def test_one_slack_at_large_C_reaches_the_cvxopt_optimum(monkeypatch, C, cache_size):
    """Few features and large C: the working set outgrows dim(w) + 1 and the active set
    solves most QPs; the run ends within 1.01 C eps of the optimum both dual bounds bound."""
    X, y, qid = random_collection(seed=23, n_queries=10, docs=(6, 14), n_features=4)
    collection, _, _ = QueryCollection.from_arrays(X, y, qid).trainable()
    forms = []
    solve = WorkingSet.solve

    def spy(self, *args, **kwargs):
        solution = solve(self, *args, **kwargs)
        forms.append((self.solver, solution.form))
        return solution

    monkeypatch.setattr(WorkingSet, "solve", spy)
    eps = 1e-3
    results = {solver: make_learner(C=C, epsilon=eps, formulation="1-slack",
                                    cache_size=cache_size, qp_solver=solver,
                                    max_iter=2000).fit(MapPlugin(collection))
               for solver in ("smo", "cvxopt")}
    assert ("smo", "active-set") in forms
    smo, cvx = results["smo"], results["cvxopt"]
    assert smo.converged and cvx.converged
    for result in (smo, cvx):
        assert result.primal_objective <= max(smo.dual_objective, cvx.dual_objective) \
            + 1.01 * C * eps * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(60))
def test_face_inverse_updates_equal_a_fresh_factorisation(seed):
    """The inverse of the face's KKT system kept by bordering and deletion equals the one
    formed afresh after a random sequence of entering and leaving variables (multipliers
    and slacks, 1-3 groups), and solving with it equals numpy's solve; sequences that pass
    through a singular face are refused (ActiveSetStuck), never answered wrongly."""
    from svmstruct_api._active_set import face_inverse_by_updates

    rng = np.random.default_rng(seed)
    k, d, n_groups = int(rng.integers(3, 15)), int(rng.integers(15, 25)), int(rng.integers(1, 4))
    vectors = rng.normal(size=(k, d))
    gram = vectors @ vectors.T
    group = rng.integers(0, n_groups, k).astype(np.intp)
    group[:n_groups] = np.arange(n_groups)
    changes = rng.integers(0, k + n_groups, 12)
    try:
        updated, fresh, face, solved = face_inverse_by_updates(
            gram, group, np.ones(n_groups), np.arange(n_groups), changes)
    except ActiveSetStuck:
        return
    m = len(face)
    kkt = np.zeros((m + n_groups, m + n_groups))  # face variables first, then the groups
    for i, u in enumerate(face):
        for j, v in enumerate(face):
            kkt[i, j] = gram[u, v] if u < k and v < k else 0.0
        g = group[u] if u < k else u - k
        kkt[i, m + g] = kkt[m + g, i] = 1.0
    np.testing.assert_allclose(updated, fresh, atol=1e-9 * np.abs(fresh).max())
    np.testing.assert_allclose(solved, np.linalg.solve(kkt, np.arange(1.0, m + n_groups + 1)),
                               atol=1e-9 * np.abs(solved).max())


def _random_face(seed, smallest):
    """(gram, group, bounds, x, face, slacked) of a random problem of 6-14 constraints in
    15-24 dimensions and 1-3 groups: x positive on the face (1 to all of each group's
    multipliers, at least ``smallest``) and 0 elsewhere; in about half the groups
    (``slacked``) the slack is positive and in the face too, in the others the group's
    multipliers sum to its bound."""
    rng = np.random.default_rng(seed)
    k, d, n_groups = int(rng.integers(6, 15)), int(rng.integers(15, 25)), int(rng.integers(1, 4))
    vectors = rng.normal(size=(k, d)) * rng.uniform(0.1, 10)
    group = rng.integers(0, n_groups, k).astype(np.intp)
    group[:n_groups] = np.arange(n_groups)
    x, bounds, face = np.zeros(k + n_groups), np.zeros(n_groups), []
    slacked = rng.random(n_groups) < 0.5
    for g in range(n_groups):
        members = np.flatnonzero(group == g)
        chosen = rng.choice(members, int(rng.integers(1, len(members) + 1)), replace=False)
        x[chosen] = rng.uniform(smallest, 2, len(chosen))
        face += list(chosen)
        bounds[g] = x[chosen].sum()
        if slacked[g]:
            bounds[g] += rng.uniform(0.5, 2)
            x[k + g] = bounds[g] - x[chosen].sum()
            face.append(k + g)
    return vectors @ vectors.T, group, bounds, x, face, slacked, rng


def _face_hessian(gram, face):
    """H_F: the Gram entries of the face's multipliers, 0 in a slack's row and column."""
    k = len(gram)
    return np.array([[gram[u, v] if u < k and v < k else 0.0 for v in face] for u in face])


@pytest.mark.parametrize("seed", range(40))
def test_the_step_after_entering_equals_the_new_faces_newton_step(seed):
    """The Newton step the solver takes after a variable joins a face at its optimum, formed
    from the bordered inverse's new column in O(|F|), equals a refined solve of the new
    face's KKT system, as do H_F times it and its curvature (faces of multipliers, with or
    without their group's slack, 1-3 groups; the entering variable a multiplier or a
    slack)."""
    from svmstruct_api._active_set import entering_step_and_solve

    gram, group, bounds, x, face, slacked, rng = _random_face(seed, 0.5)
    k = len(gram)
    # the face's optimum at x: g_F = E_F^T nu, nu_g = 0 where the slack (gradient 0) is in F
    nu = np.where(slacked, 0.0, rng.normal(size=len(bounds)))
    losses = rng.normal(size=k)
    multipliers = [v for v in face if v < k]
    losses[multipliers] = (gram @ x[:k])[multipliers] + nu[group[multipliers]]
    outside = [v for v in range(len(x)) if v not in face]
    if not outside:
        return
    entering = int(rng.choice(outside))
    try:
        step, product, curvature, solved = entering_step_and_solve(
            gram, losses, group, bounds, x, np.array(face, dtype=np.intp), entering)
    except ActiveSetStuck:  # the larger face is singular: no step to compare
        return
    hessian = _face_hessian(gram, face + [entering])
    scale = np.abs(solved).max()
    assert scale > 0
    np.testing.assert_allclose(step, solved, atol=1e-8 * scale)
    np.testing.assert_allclose(product, hessian @ solved, atol=1e-8 * np.abs(hessian).max() * scale)
    assert curvature == pytest.approx(solved @ hessian @ solved, rel=1e-8, abs=1e-12 * scale)


@pytest.mark.parametrize("seed", range(40))
def test_the_step_after_a_blocked_step_equals_the_smaller_faces_newton_step(seed):
    """When a variable blocks the Newton step of a face, the step the solver takes next on
    the face without it, formed in O(|F|) from the inverse's column of the leaving variable
    before its deletion, equals a refined solve of the smaller face's KKT system, as does
    H_F times it (random faces of multipliers, with or without their group's slack, 1-3
    groups, away from their optimum)."""
    from svmstruct_api._active_set import follow_up_and_solve

    gram, group, bounds, x, face, _, rng = _random_face(seed, 0.05)
    losses = rng.normal(size=len(gram)) * np.abs(gram).max()
    try:
        made = follow_up_and_solve(gram, losses, group, bounds, x, np.array(face, dtype=np.intp))
    except ActiveSetStuck:  # a singular face: no step to compare
        return
    if made is None:  # nothing blocks the step
        return
    step, product, solved, new_face = made
    hessian = _face_hessian(gram, list(new_face))
    scale = max(np.abs(solved).max(), 1e-6)  # x is of order 1: a zero step to 1e-14
    np.testing.assert_allclose(step, solved, atol=1e-8 * scale)
    np.testing.assert_allclose(product, hessian @ solved,
                               atol=1e-8 * max(np.abs(hessian).max(), 1.0) * scale)


def test_the_next_solve_starts_from_the_last_face():
    """Constraints added and removed between solves: each active-set solve after the first
    starts from the last solve's face (its memory names constraints by id, so it follows
    the removals) and reaches cvxopt's optimum, as a solve that forms its face afresh does."""
    rng = np.random.default_rng(12)
    vectors, losses = rng.normal(size=(60, 30)), rng.uniform(0, 1, 60)
    groups = np.zeros(60, dtype=int)
    ws = WorkingSet(30, [50.0])
    started_from = []
    real = active_set_module.active_set_solve

    def recording(*args):
        started_from.append(args[-1] is not None)
        return real(*args)

    def face_rows():
        names = ws._memory["active-set"][0]
        ids = ws.problem().ids
        return np.array([ws.vectors[np.flatnonzero(ids == c)[0]] for c in names[names >= 0]])

    for a in range(0, 60, 10):
        ws.add(groups[a:a + 10], vectors[a:a + 10], losses[a:a + 10])
        if a == 30:
            rows = face_rows()
            ws.remove((ws.alpha > 0) | (rng.random(len(ws)) < 0.5))  # the face stays
            # the kept face names the same constraints at their new places
            np.testing.assert_array_equal(face_rows(), rows)
        active_set_module.active_set_solve = recording
        try:
            solution = ws.solve(gap_tolerance=1e-10)
        finally:
            active_set_module.active_set_solve = real
        assert solution.form == "active-set"
        fresh = WorkingSet(30, [50.0], solver="cvxopt")
        fresh.add(ws.groups, ws.vectors, ws.losses)
        reference = fresh.solve()
        assert solution.dual_objective == pytest.approx(reference.dual_objective, rel=1e-7)
    assert started_from[0] is False and all(started_from[1:])


def test_a_solve_takes_the_last_faces_buffers_over_once():
    """The last face's inverse and H_F go to the next solve without a copy where their
    strides fit (the capacity rank(G) + #groups reached): that solve takes the buffers over
    and empties the record, so the same memory offered again (as after a solve that raised
    after taking them) starts from a face formed afresh; where the strides differ the
    inverse is copied and the record kept.  Every solve reaches cvxopt's optimum."""
    rng = np.random.default_rng(21)
    vectors, losses = rng.normal(size=(70, 30)), rng.uniform(0, 1, 70)
    groups = np.zeros(70, dtype=int)
    ws = WorkingSet(30, [50.0])

    def solve_and_check():
        solution = ws.solve(gap_tolerance=1e-10)
        assert solution.form == "active-set"
        fresh = WorkingSet(30, [50.0], solver="cvxopt")
        fresh.add(ws.groups, ws.vectors, ws.losses)
        assert solution.dual_objective == pytest.approx(fresh.solve().dual_objective,
                                                        rel=1e-7)
        return ws._memory["active-set"][1]

    ws.add(groups[:10], vectors[:10], losses[:10])
    small = solve_and_check()  # K = 10: capacity 11
    ws.add(groups[10:40], vectors[10:40], losses[10:40])
    full = solve_and_check()  # capacity 31 = rank + 1 from here on: another stride
    assert small  # copied, not taken over
    ws.add(groups[40:50], vectors[40:50], losses[40:50])
    memory = ws._memory["active-set"]
    taken = solve_and_check()
    assert not full and taken is not full  # taken over, emptied; a new record handed on
    assert active_set_module._last_face(ws.problem(), memory) is None
    ws._memory["active-set"] = memory  # offered again: a face formed afresh
    ws.add(groups[50:70], vectors[50:70], losses[50:70])
    assert solve_and_check()


@pytest.mark.parametrize("subtract", [False, True])
@pytest.mark.parametrize("n", [1, 3, 4, 7, 16, 61])
def test_the_vectorised_row_operations_equal_numpys_row_by_row_to_the_bit(n, subtract):
    """The active set's row sums and rank-one updates (_vector_ops.h: an AVX2 and a baseline
    build chosen at load time) are elementwise, one product and one sum per row in row
    order: they equal numpy's row-by-row updates bit for bit, at lengths that fill no
    vector register evenly too; a fused multiply-add or a reordered sum would not."""
    from svmstruct_api._active_set import rank_one_update, scaled_row_sums
    rng = np.random.default_rng(n)
    rows = rng.normal(size=(9, n)) * 10.0 ** rng.integers(-8, 8, size=(9, n))
    coef = rng.normal(size=9) * 10.0 ** rng.integers(-8, 8, size=9)
    coef[[2, 5]] = 0.0
    out = rng.normal(size=n)
    expected = out.copy()
    for c, row in zip(coef, rows):
        if c != 0.0:
            expected = expected - c * row if subtract else expected + c * row
    scaled_row_sums(coef, rows, out, subtract)
    assert out.tobytes() == expected.tobytes()
    a, v = rows.copy(), rng.normal(size=n) * 1e3
    expected = a.copy()
    for r in range(len(a)):
        if coef[r] != 0.0:
            expected[r] = expected[r] - coef[r] * v if subtract else expected[r] + coef[r] * v
    rank_one_update(coef, v, a, subtract)
    assert a.tobytes() == expected.tobytes()


def _clustered_problem(seed):
    """K of 60-250 cuts in 3-11 features, near-parallel in eight clusters (spread 1e-6 to
    0.1), dealt into 8-23 groups with one bound C of 1 to 1e4, and a feasible start with
    about 30% of the multipliers positive: faces whose Schur complements come down to
    1e-8 of their terms."""
    rng = np.random.default_rng(seed)
    d, n_groups = int(rng.integers(3, 12)), int(rng.integers(8, 24))
    k = int(rng.integers(60, 250))
    clusters = rng.normal(size=(8, d))
    members, noise = rng.integers(0, 8, k), rng.normal(size=(k, d))
    vectors = clusters[members] + noise * 10.0 ** rng.uniform(-6, -1)
    vectors *= rng.uniform(0.1, 2)
    losses = rng.uniform(0, 1, k)
    groups = np.arange(k) % n_groups
    bounds = np.full(n_groups, 10.0 ** rng.uniform(0, 4))
    rng = np.random.default_rng(seed + 99)
    alpha = rng.uniform(0, 1, k) * (rng.uniform(size=k) < 0.3)
    mass = np.bincount(groups, alpha, n_groups)
    alpha *= np.minimum(1.0, bounds / np.maximum(mass, 1e-300))[groups]
    return vectors, losses, groups, bounds, alpha


@pytest.mark.parametrize("seed", [5, 106, 137, 179, 360])
def test_a_variable_that_would_leave_at_once_is_exchanged_in_instead(seed):
    """On these faces the Newton step after an entry moves the entering variable below 0
    at once: it carries the rest of the last face's step too, which a Schur complement of
    1e-8 of its terms lets outweigh the entering variable's own part.  The variable is
    taken out again, moved in along the direction that raises it alone, and the face's
    optimum refined; the solve reaches cvxopt's optimum (before, each of these raised
    ActiveSetStuck and went to cvxopt)."""
    vectors, losses, groups, bounds, alpha = _clustered_problem(seed)
    gram = vectors @ vectors.T
    tolerance = 1e-9 * bounds.sum()
    _, gap, objective, _ = active_set_solve(
        gram, losses, groups.astype(np.intp), bounds, alpha, tolerance, 0.0,
        vectors.shape[1] + len(bounds), 100_000)
    assert np.all(alpha >= 0)
    assert np.all(np.bincount(groups, alpha, len(bounds)) <= bounds * (1 + 1e-12))
    assert gap <= tolerance
    assert objective == pytest.approx(losses @ alpha - 0.5 * alpha @ gram @ alpha, rel=1e-9)
    _, dual = _reference(vectors, losses, groups, bounds)
    assert objective == pytest.approx(dual.dual_objective, abs=10 * tolerance, rel=1e-7)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 61, 301])
def test_the_gram_rows_are_eight_interleaved_partial_sums_to_the_bit(n):
    """The working set's new Gram rows (_products.gram_rows, built for AVX2 and baseline
    x86-64) sum each dot product as eight interleaved partial sums in a fixed order, then
    the last n mod 8 products: equal bit for bit to the same order in numpy, on any CPU; a
    fused multiply-add or a reordered sum would not be."""
    from svmstruct_api._products import gram_rows
    rng = np.random.default_rng(n)
    new = rng.normal(size=(3, n)) * 10.0 ** rng.integers(-8, 8, size=(3, n))
    rows = rng.normal(size=(5, n)) * 10.0 ** rng.integers(-8, 8, size=(5, n))
    whole = n - n % 8
    expected = np.empty((3, 5))
    for k in range(3):
        for other in range(5):
            products = new[k] * rows[other]
            lanes = np.zeros(8)
            for start in range(0, whole, 8):
                lanes = lanes + products[start:start + 8]
            total = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + \
                ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]))
            for j in range(whole, n):
                total = total + products[j]
            expected[k, other] = total
    assert gram_rows(new, rows).tobytes() == expected.tobytes()
