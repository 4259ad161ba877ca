import pytest

from tgbhub.errors import DatasetNotFoundError, InvalidNameError, VersionNotFoundError
from tgbhub.registry import Reference, Registry, natural_key, parse_reference


@pytest.mark.parametrize("text, expected", [
    ("t-grab/ce-64", Reference("t-grab/ce-64", None)),
    ("t-grab/ce-64@1.0.0", Reference("t-grab/ce-64", "1.0.0")),
    ("t-grab/ce-64@v1.0.0", Reference("t-grab/ce-64", "1.0.0")),
    ("tgb/tgbl-wiki", Reference("tgb/tgbl-wiki", None)),
])
def test_valid_references(text: str, expected: Reference) -> None:
    assert parse_reference(text) == expected


@pytest.mark.parametrize("text", ["../etc/passwd", "t-grab/../x", "/abs/path", "t-grab/ce 64", "t-grab/a/b",
                                  "t-grab", "T-GRAB/ce-64", "t-grab/ce-64@1.0", "t-grab/ce-64@latest", "t-grab/ce-64@", "",
                                  " t-grab/ce-64", "t-grab/ce-64\n"])
def test_malformed_references_raise_value_errors(text: str) -> None:
    with pytest.raises(InvalidNameError) as info:
        parse_reference(text)
    assert isinstance(info.value, ValueError)
    assert "t-grab/ce-64" in str(info.value)  # the message shows a valid example


def test_conflicting_versions_are_refused() -> None:
    with pytest.raises(InvalidNameError, match="only one"):
        parse_reference("t-grab/ce-64@1.0.0", version="2.0.0")
    assert parse_reference("t-grab/ce-64@1.0.0", version="1.0.0").version == "1.0.0"


def test_unknown_dataset_suggests_close_names() -> None:
    with pytest.raises(DatasetNotFoundError) as info:
        Registry().resolve(parse_reference("t-grab/ce-65"))
    assert isinstance(info.value, LookupError)
    assert "t-grab/ce-64" in info.value.suggestions
    assert "tgbhub list" in str(info.value)


def test_unknown_version_lists_available_ones() -> None:
    with pytest.raises(VersionNotFoundError, match="1.0.0") as info:
        Registry().resolve(parse_reference("t-grab/ce-64@9.9.9"))
    assert isinstance(info.value, LookupError) and info.value.available == ("1.0.0",)


def test_newest_version_wins(tmp_path) -> None:
    source = Registry().root / "t-grab" / "ce-1" / "1.0.0.json"
    for version in ("1.0.0", "1.2.0", "1.10.0"):
        target = tmp_path / "t-grab" / "ce-1" / f"{version}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text().replace('"version": "1.0.0"', f'"version": "{version}"', 1))
    registry = Registry(tmp_path)
    assert registry.versions("t-grab/ce-1") == ["1.0.0", "1.2.0", "1.10.0"]
    assert registry.resolve(parse_reference("t-grab/ce-1")).version == "1.10.0"


def test_names_sort_naturally_and_filter_by_family() -> None:
    names = Registry().names("t-grab")
    assert names.index("t-grab/ce-4") < names.index("t-grab/ce-16")
    assert len(Registry().names("t-grab", derived=False)) == 52 and Registry().names("nope") == []
    assert set(names) - set(Registry().names("t-grab", derived=False)) == {n for n in names if "~" in n}


def test_numbers_sort_as_numbers() -> None:
    names = Registry().names("chaosnet")
    assert names.index("chaosnet/k2.0-rho0.05-n8") < names.index("chaosnet/k2.0-rho0.1-n8")
    assert names.index("chaosnet/k2.0-rho0.1-n8") < names.index("chaosnet/k2.0-rho0.2-n8")
    assert names.index("chaosnet/k2.0-rho0.2-n8") < names.index("chaosnet/k2.0-rho0.2-n16")
    assert sorted(["ce-x", "ce-4", "ce-16"], key=natural_key) == ["ce-4", "ce-16", "ce-x"]  # mixed parts compare


@pytest.mark.parametrize("text, suggestion", [("ce-64", "'t-grab/ce-64'"),
                                              ("k2.0-rho0.2-n8@1.0.0", "'chaosnet/k2.0-rho0.2-n8@1.0.0'")])
def test_bare_name_suggests_its_family(text: str, suggestion: str) -> None:
    with pytest.raises(InvalidNameError, match="needs its family") as info:
        Registry().lookup(text)
    assert suggestion in str(info.value)


def test_empty_version_names_the_fix() -> None:
    with pytest.raises(InvalidNameError, match="no version") as info:
        Registry().lookup("t-grab/ce-64@")
    assert "'t-grab/ce-64@MAJOR.MINOR.PATCH'" in str(info.value)


def test_select_takes_names_or_a_family_or_every_dataset_never_two_at_once() -> None:
    registry = Registry()
    assert registry.select(["t-grab/ce-4"]) == ["t-grab/ce-4"]
    assert len(registry.select(family="t-grab")) == 52
    assert "t-grab/ce-4~shuffle-s0" in registry.select(family="t-grab", derived=True)
    with pytest.raises(InvalidNameError, match="not both"):
        registry.select(["chaosnet/mini-k2.0-rho0.1-n8"], family="t-grab")
    with pytest.raises(InvalidNameError, match="unknown family 'tgrab'; families: chaosnet, t-grab"):
        registry.select(family="tgrab")
    with pytest.raises(InvalidNameError, match="nothing selected"):
        registry.select()
