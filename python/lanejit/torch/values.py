"""Values of a torch graph while it is lowered to a row program.

A torch tensor of shape [..., n] inside a captured subgraph is one row of n
columns per flattened leading index. Its row program value is `Cols`: a list
of pieces (length, column-vector Expr) side by side, because `torch.cat` of
column vectors has no single IR node; the pieces are written to their column
ranges at the end, and elementwise operations on pieces of different cuts
work on the common refinement of both cuts. A [..., 1] tensor (a keepdim
reduction, or a per-row input) is `Uniform`: one value per row that
broadcasts over the columns. Python numbers stay numbers.
"""

from .. import _lanejit as _lj


class Unsupported(Exception):
    """Raised while lowering: the node stays in torch, with this reason."""


class Uniform:
    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr


class Cols:
    __slots__ = ("pieces",)

    def __init__(self, pieces):
        self.pieces = [(n, e) for n, e in pieces if n > 0]

    @property
    def n(self):
        return sum(n for n, _ in self.pieces)

    def cuts(self):
        out, at = [], 0
        for n, _ in self.pieces:
            at += n
            out.append(at)
        return out

    def part(self, begin, end):
        """Columns [begin, end) as one Expr (within one piece) or a Cols."""
        pieces, at = [], 0
        for n, e in self.pieces:
            lo, hi = max(begin, at), min(end, at + n)
            if lo < hi:
                whole = lo == at and hi == at + n
                pieces.append((hi - lo, e if whole else e[lo - at:hi - at]))
            at += n
        return Cols(pieces)


def is_value(v):
    return isinstance(v, (Uniform, Cols))


def _as_operand(v, begin, end):
    if isinstance(v, Cols):
        part = v.part(begin, end)
        assert len(part.pieces) == 1, "cuts refine every operand"
        return part.pieces[0][1]
    if isinstance(v, Uniform):
        return v.expr
    return v


def _broadcast_single(v, width):
    # A one-column vector next to wider ones broadcasts like a per-row value.
    if isinstance(v, Cols) and v.n == 1 and width > 1:
        return Uniform(_lj.rowmax(v.pieces[0][1]))
    return v


def elementwise(fn, *args):
    """fn applied lane by lane; Uniform and numbers broadcast over columns."""
    widths = {a.n for a in args if isinstance(a, Cols)}
    width = max(widths, default=0)
    args = [_broadcast_single(a, width) for a in args]
    cols = [a for a in args if isinstance(a, Cols)]
    if {c.n for c in cols} - {width}:
        raise Unsupported("operands of different column counts " + str(sorted(widths)))
    if not cols:
        if not any(isinstance(a, Uniform) for a in args):
            raise Unsupported("no tensor operand")
        return Uniform(fn(*[_as_operand(a, 0, 0) for a in args]))
    cuts = sorted({c for v in cols for c in v.cuts()})
    pieces, begin = [], 0
    for end in cuts:
        pieces.append((end - begin, fn(*[_as_operand(a, begin, end) for a in args])))
        begin = end
    return Cols(pieces)


def reduce(kind, v):
    """A row reduction of a Cols value: sum, mean, max or min (Uniform)."""
    if not isinstance(v, Cols):
        raise Unsupported("reduction of a value that is already one per row")
    exprs = [e for _, e in v.pieces]
    if kind == "mean" and len(exprs) == 1:
        return Uniform(_lj.mean(exprs[0]))
    one = {"sum": _lj.sum, "mean": _lj.sum, "max": _lj.rowmax, "min": _lj.rowmin}[kind]
    combine = {"sum": lambda a, b: a + b, "mean": lambda a, b: a + b,
               "max": _lj.maximum, "min": _lj.minimum}[kind]
    acc = one(exprs[0])
    for e in exprs[1:]:
        acc = combine(acc, one(e))
    if kind == "mean":
        acc = acc / float(v.n)
    return Uniform(acc)


def concat(values):
    pieces = []
    for v in values:
        if not isinstance(v, Cols):
            raise Unsupported("cat of a per-row value")
        pieces.extend(v.pieces)
    return Cols(pieces)
