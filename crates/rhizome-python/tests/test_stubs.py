"""The type stubs describe the module as it is."""

import ast
import inspect
import pathlib

import rhizome
from rhizome import _rhizome

PACKAGE = pathlib.Path(rhizome.__file__).parent


def stub_classes():
    tree = ast.parse((PACKAGE / "_rhizome.pyi").read_text())
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                item.name for item in node.body if isinstance(item, ast.FunctionDef)
            }
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    return classes, functions


def test_package_is_typed():
    assert (PACKAGE / "py.typed").exists()
    assert (PACKAGE / "_rhizome.pyi").exists()


def test_every_public_member_is_in_the_stubs():
    classes, functions = stub_classes()
    assert "import_csv" in functions
    for name in ("Database", "Connection", "Transaction", "Result"):
        cls = getattr(_rhizome, name)
        public = {
            m for m in dir(cls) if not m.startswith("_") or m in ("__enter__", "__exit__", "__iter__", "__next__", "__len__")
        }
        missing = public - classes[name]
        assert not missing, f"{name}: {missing} not in _rhizome.pyi"


def test_import_csv_signature_matches():
    _, functions = stub_classes()
    assert inspect.signature(rhizome.import_csv).parameters.keys() >= {"path", "nodes", "relationships"}
