"""Members in the portal: the owner adds a wallet with a role and removes it, for its publisher account and for its
advertiser account; the member, signed in with its own wallet, sees the account's sites on its dashboard (a
publisher account's) and acts within its role; a refused form adds nothing."""

from __future__ import annotations

import pytest

from adnet.accounts.models import AdvertiserMember, PublisherMember, Site
from adnet.campaigns.models import CampaignStatus, Creative
from adnet.money import ledger
from tests.factories import G, fund, make_advertiser, make_campaign, make_publisher, make_site


async def test_an_owner_adds_a_viewer_who_reads_but_cannot_change(publisher, other_publisher):
    site = await make_site(await make_publisher(publisher.wallet), domain="members-flow.example", name="Old")
    response = await publisher.post("/portal/members", {"wallet": other_publisher.account.address,
                                                        "role": "viewer"})
    assert response.status_code == 303
    page = await (await publisher.get("/portal/members")).get_data(as_text=True)
    assert f'id="member-{other_publisher.wallet}"' in page and "viewer" in page

    dashboard = await (await other_publisher.get("/portal")).get_data(as_text=True)
    assert "members-flow.example" in dashboard
    assert (await other_publisher.get(f"/portal/sites/{site.id}")).status_code == 200
    refused = await other_publisher.post(f"/portal/sites/{site.id}/rename", {"name": "Mine"})
    assert refused.status_code == 403 and "viewer" in await refused.get_data(as_text=True)
    assert (await Site.get(id=site.id)).name == "Old"
    memberships = await (await other_publisher.get("/portal/members")).get_data(as_text=True)
    assert 'id="memberships"' in memberships and "viewer" in memberships

    removed = await publisher.post(f"/portal/members/{other_publisher.wallet}/remove")
    assert removed.status_code == 303
    assert (await other_publisher.get(f"/portal/sites/{site.id}")).status_code == 403


async def test_a_refused_member_form_says_why(publisher):
    await make_site(await make_publisher(publisher.wallet), domain="members-form.example")
    response = await publisher.post("/portal/members", {"wallet": "0x12", "role": "viewer"})
    assert response.status_code == 400 and 'role="alert"' in await response.get_data(as_text=True)
    assert await PublisherMember.all().count() == 0


async def test_without_a_publisher_account_there_is_nothing_to_add_to(publisher):
    page = await (await publisher.get("/portal/members")).get_data(as_text=True)
    assert 'id="no-account"' in page
    response = await publisher.post("/portal/members", {"wallet": "0x" + "ab" * 20, "role": "viewer"})
    assert response.status_code == 404


async def test_an_advertiser_owner_adds_and_removes_a_member_of_its_advertiser_account(publisher, other_publisher):
    """The same page manages the wallet's advertiser account: the form names it, the member sees the membership
    and reads the account's campaigns through the API until it is removed."""
    advertiser = await make_advertiser(publisher.wallet)
    campaign = await make_campaign(advertiser)
    response = await publisher.post("/portal/members", {"wallet": other_publisher.account.address, "role": "viewer",
                                                        "account": "advertiser"})
    assert response.status_code == 303
    page = await (await publisher.get("/portal/members")).get_data(as_text=True)
    assert f'id="advertiser-member-{other_publisher.wallet}"' in page and 'id="no-account"' in page
    assert await PublisherMember.all().count() == 0
    memberships = await (await other_publisher.get("/portal/members")).get_data(as_text=True)
    assert "advertiser account" in memberships and advertiser.id in memberships
    assert (await other_publisher.get(f"/api/advertisers/campaigns/{campaign.id}")).status_code == 200

    removed = await publisher.post(f"/portal/members/{other_publisher.wallet}/remove", {"account": "advertiser"})
    assert removed.status_code == 303
    assert await AdvertiserMember.all().count() == 0
    assert (await other_publisher.get(f"/api/advertisers/campaigns/{campaign.id}")).status_code == 403


async def test_a_refused_advertiser_member_form_is_shown_again_beside_its_own_form(publisher):
    await make_advertiser(publisher.wallet)
    response = await publisher.post("/portal/members", {"wallet": publisher.account.address, "role": "viewer",
                                                        "account": "advertiser"}, htmx=True)
    html = await response.get_data(as_text=True)
    assert response.status_code == 409 and response.headers["HX-Retarget"] == "#add-advertiser-member"
    assert 'id="advertiser-member-error"' in html and 'name="account" value="advertiser"' in html
    assert await AdvertiserMember.all().count() == 0


@pytest.mark.usefixtures("banner_cdn")
async def test_a_member_works_on_the_advertiser_accounts_campaign_pages_within_its_role(publisher, other_publisher):
    """A manager of the account opens its campaign page (the account's balance, not its own) and adds a creative;
    re-added as a viewer, it still reads the page and is refused the same change."""
    advertiser = await make_advertiser(publisher.wallet)
    await fund(ledger.advertiser(advertiser.id), 7 * G)
    campaign = await make_campaign(advertiser, status=CampaignStatus.DRAFT, funded=0)
    page_path = f"/portal/advertise/campaigns/{campaign.id}"
    creative = {"bannerUrl": "https://cdn.example/banner.png", "targetUrl": "https://shop.example/", "size": "300x250",
                "mediaType": "image", "description": ""}
    add = {"wallet": other_publisher.account.address, "account": "advertiser"}
    await publisher.post("/portal/members", {**add, "role": "manager"})

    page = await (await other_publisher.get(page_path)).get_data(as_text=True)
    assert 'id="campaign-available">7 G$' in page
    assert (await other_publisher.post(f"{page_path}/creatives", creative)).status_code == 303
    assert await Creative.filter(campaign_id=campaign.id).count() == 1

    await publisher.post(f"/portal/members/{other_publisher.wallet}/remove", {"account": "advertiser"})
    await publisher.post("/portal/members", {**add, "role": "viewer"})
    assert (await other_publisher.get(page_path)).status_code == 200
    refused = await other_publisher.post(f"{page_path}/creatives", creative)
    assert refused.status_code == 403 and "viewer" in await refused.get_data(as_text=True)
    assert await Creative.filter(campaign_id=campaign.id).count() == 1
