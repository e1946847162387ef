"""The store modules' old flat paths still import, with a DeprecationWarning, as the very
modules they moved to."""

from __future__ import annotations

import importlib
import sys

import pytest

import aorc.io

OLD_NAMES = {
    "aorc.io.s3_config": ("aorc.io.s3.config", "S3Config"),
    "aorc.io.s3_clients": ("aorc.io.s3.clients", "map_s3_error"),
    "aorc.io.s3_obstore": ("aorc.io.s3.obstore_client", "ObstoreS3Store"),
    "aorc.io.gcs_config": ("aorc.io.gcs.config", "GCSConfig"),
    "aorc.io.azure_config": ("aorc.io.azure.config", "AzureConfig"),
}


def test_every_moved_module_is_tested() -> None:
    assert dict(aorc.io.MOVED_MODULES) == {old: new for old, (new, _) in OLD_NAMES.items()}


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_an_old_path_warns_and_gives_the_new_module(old: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    new_name, attr = OLD_NAMES[old]
    new = importlib.import_module(new_name)
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated.*import {new_name}") as rec:
        module = importlib.import_module(old)
    assert module is new
    assert getattr(module, attr) is getattr(new, attr)
    assert rec[0].filename == __file__  # the warning points at the importing code
    assert sys.modules[old] is new


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_from_import_of_an_old_name_works(old: str, monkeypatch: pytest.MonkeyPatch) -> None:
    new_name, attr = OLD_NAMES[old]
    monkeypatch.delitem(sys.modules, old, raising=False)
    package, _, leaf = old.rpartition(".")
    monkeypatch.delattr(sys.modules[package], leaf, raising=False)
    with pytest.warns(DeprecationWarning):
        exec(f"from {old} import {attr} as got", namespace := {})
    assert namespace["got"] is getattr(importlib.import_module(new_name), attr)
    assert importlib.import_module(old).__name__ == new_name


def test_an_unknown_old_name_still_fails() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("aorc.io.s3_nothing")


def test_the_packages_export_their_classes() -> None:
    import aorc.io.azure
    import aorc.io.gcs
    import aorc.io.s3
    assert aorc.io.s3.S3Store is aorc.io.S3Store and aorc.io.s3.S3Config is aorc.io.S3Config
    assert aorc.io.gcs.GCSStore is aorc.io.GCSStore and aorc.io.gcs.GCSConfig is aorc.io.GCSConfig
    assert aorc.io.azure.AzureStore is aorc.io.AzureStore
    assert aorc.io.azure.AzureConfig is aorc.io.AzureConfig
