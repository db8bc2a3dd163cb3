"""The IAB Ad Product Taxonomy data file adnet ships: it maps every category to one id of the taxonomy's version,
and a file that does not is refused."""

import json

import pytest

from adnet.campaigns import taxonomy
from adnet.campaigns.models import Category
from adnet.campaigns.taxonomy import TaxonomyError, read


def test_the_shipped_file_maps_every_category_to_an_ad_product_taxonomy_2_id():
    products = taxonomy.ad_products()
    assert (products.name, products.version) == ("IAB Tech Lab Ad Product Taxonomy", "2.0")
    assert list(products.entries) == list(Category)
    assert all(entry.iab_id.isdigit() and entry.iab_name for entry in products.entries.values())
    assert taxonomy.iab_id(Category.NFT) == taxonomy.iab_id("nft") == products.entries[Category.NFT].iab_id
    assert products.entries[Category.NFT].iab_name == "NFTs"
    assert products.entries[Category.GAMBLING].iab_name == "Gambling"


def write(tmp_path, rows: list[dict]) -> object:
    path = tmp_path / "taxonomy.json"
    path.write_text(json.dumps({"taxonomy": "T", "version": "9", "categories": rows}))
    return path


def rows_for(categories) -> list[dict]:
    return [{"category": category.value, "iabId": str(1000 + index), "iabName": category.value}
            for index, category in enumerate(categories)]


def test_a_file_read_keeps_its_version_and_ids(tmp_path):
    read_back = read(write(tmp_path, rows_for(Category)))
    assert (read_back.name, read_back.version) == ("T", "9")
    assert read_back.iab_id(Category.DEFI) == "1000"


@pytest.mark.parametrize(("rows", "message"), [
    (rows_for(list(Category)[1:]), "no IAB id for defi"),
    (rows_for(Category) + rows_for([Category.NFT]), "nft is mapped twice"),
    ([*rows_for(Category), {"category": "poker", "iabId": "1", "iabName": "x"}], "unknown category 'poker'"),
    ([{**row, "iabId": ""} if row["category"] == "dao" else row for row in rows_for(Category)], "dao has no IAB id"),
])
def test_a_file_that_does_not_map_every_category_once_is_refused(tmp_path, rows, message):
    with pytest.raises(TaxonomyError, match=message):
        read(write(tmp_path, rows))
