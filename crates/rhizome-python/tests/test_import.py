"""rhizome.import_csv wraps the bulk importer."""

import pytest

import rhizome


def write(path, text):
    path.write_text(text)
    return path


def test_import_then_query(tmp_path):
    people = write(tmp_path / "people.csv", "id:ID,name,age:int\n1,Ada,36\n2,Charles,79\n")
    knows = write(tmp_path / "knows.csv", ":START_ID,:END_ID,since:int\n1,2,1833\n")
    report = rhizome.import_csv(
        tmp_path / "db", nodes={"Person": people}, relationships={"KNOWS": [str(knows)]}
    )
    assert report["nodes"] == 2 and report["relationships"] == 1
    assert dict(report["labels"]) == {"Person": 2}
    db = rhizome.Database(tmp_path / "db")
    rows = db.execute(
        "MATCH (a:Person)-[k:KNOWS]->(b) RETURN a.name, a.age, k.since, b.name"
    ).fetchall()
    assert rows == [("Ada", 36, 1833, "Charles")]


def test_specs_as_on_the_command_line(tmp_path):
    items = write(tmp_path / "items.tsv", "id:ID\tname\nx\tone\ny\ttwo\n")
    report = rhizome.import_csv(tmp_path / "db", nodes=[f"Item={items}"], delimiter="TAB")
    assert report["nodes"] == 2
    assert rhizome.Database(tmp_path / "db").execute(
        "MATCH (i:Item) RETURN i.name ORDER BY i.name"
    ).fetchall() == [("one",), ("two",)]


def test_bad_input_is_an_input_error_with_position(tmp_path):
    bad = write(tmp_path / "bad.csv", "id:ID,age:int\n1,30\n2,not-a-number\n")
    with pytest.raises(rhizome.InputError) as info:
        rhizome.import_csv(tmp_path / "db", nodes={"P": bad})
    assert info.value.position is not None and info.value.position.line == 3
    assert info.value.source and info.value.source.endswith("bad.csv")
    assert not (tmp_path / "db").exists()


def test_missing_file_and_bad_options(tmp_path):
    with pytest.raises(rhizome.IoError):
        rhizome.import_csv(tmp_path / "db", nodes={"P": tmp_path / "missing.csv"})
    with pytest.raises(rhizome.ArgumentError):
        rhizome.import_csv(tmp_path / "db", nodes={"P": tmp_path / "x.csv"}, id_type="uuid")
    with pytest.raises(TypeError):
        rhizome.import_csv(tmp_path / "db", nodes=42)
