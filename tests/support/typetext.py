"""Type trees from hand-written annotation text, for tests only.

The generator never reads an annotation back from text (``mcptasks_gen.typeexpr``);
tests write the types they need as Python source and check that ``render()`` gives
back source that means the same tree (``parse(t.render()) == t``).
"""

from __future__ import annotations

import ast

from mcptasks_gen import typeexpr as tx


def parse(text: str) -> tx.Type:
    """The tree of an annotation written as Python source."""
    return _type(ast.parse(text, mode="eval").body)


def _type(node: ast.expr) -> tx.Type:
    if isinstance(node, ast.Constant) and node.value is None:
        return tx.NONE
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return tx.Forward(parse(node.value))
    if isinstance(node, ast.Name):
        return tx.Name(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return tx.Name(node.attr, node.value.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return tx.union((_type(node.left), _type(node.right)), dedupe=False)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        head = node.value.id
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Literal":
            return tx.Literal(tuple(ast.literal_eval(a) for a in args))
        if head == "Annotated":
            return tx.Annotated(_type(args[0]), tuple(_meta(m) for m in args[1:]))
        return tx.Generic(head, tuple(_type(a) for a in args))
    raise ValueError(f"not a type the generator makes: {ast.unparse(node)}")


def _meta(node: ast.expr) -> tx.Metadata:
    if isinstance(node, ast.Name):
        return tx.Dispatched(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        func = node.func.id
        if func == "Tag":
            return tx.Tag(ast.literal_eval(node.args[0]))
        if func == "Discriminator" and isinstance(node.args[0], ast.Name):
            return tx.PickedBy(node.args[0].id)
        keywords = [(k.arg or "", ast.literal_eval(k.value)) for k in node.keywords]
        if func == "Field" and [k for k, _ in keywords] == ["discriminator"]:
            return tx.Discriminated(str(keywords[0][1]))
        if func == "Field":
            return tx.Constraints(tuple(keywords))
    raise ValueError(f"not metadata the generator makes: {ast.unparse(node)}")
