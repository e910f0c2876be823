"""The table's chat on the board page, in Chromium: two players, each in a browser of their
own, chat both ways live, and a cut chat stream resumes from the last position shown + 1; the
host hides a message and both see it hidden; a spectator reads but has no text box; a message
over 500 characters is refused in words."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import Screenshots, WebSystem
from tests.browser.tables import VIEWPORT, Table, open_page

WATCH_CHAT = "/shikoku.v1.LobbyService/WatchChat"
pytestmark = pytest.mark.e2e

MESSAGE = "#chat .chat-message[data-number='{number}']"


def say(page: Page, text: str) -> None:
    form = page.locator("#chat form[data-control='chat']")
    form.locator("textarea").fill(text)
    form.locator("button[data-control='chat-send']").click()


def shown(page: Page, number: int, seat: int, text: str, hidden: bool = False) -> None:
    message = page.locator(MESSAGE.format(number=number))
    expect(message).to_have_attribute("data-seat", str(seat))
    expect(message).to_have_attribute("data-hidden", "true" if hidden else "false")
    expect(message.locator(".chat-text")).to_have_text(text)


def open_as_host(page: Page, system: WebSystem, table: Table) -> None:
    """The page as the browser that created the table: it holds the host token."""
    page.set_viewport_size(VIEWPORT)
    page.goto(system.page_url)
    hosts = json.dumps({table.game_id: table.host_token})
    page.evaluate("hosts => localStorage.setItem('shikoku.hosts', hosts)", hosts)
    open_page(page, system, table.game_id)


def test_two_players_chat_live_the_host_hides_and_a_long_message_is_refused(
    web_system: WebSystem,
    chromium: Browser,
    player_pages: list[Page],
    screenshots: Screenshots,
) -> None:
    table = Table(web_system)
    ann, bo, host = player_pages
    open_page(ann, web_system, table.game_id, 1, table.tokens[1])
    open_page(bo, web_system, table.game_id, 2, table.tokens[2])
    open_as_host(host, web_system, table)
    for page in (ann, bo, host):
        expect(page.locator("#chat form[data-control='chat'] .chat-left")).to_have_text(
            "500 characters left"
        )

    say(ann, "Good luck, everyone!")
    for page in (ann, bo, host):
        shown(page, 1, 1, "Good luck, everyone!")
    expect(bo.locator(MESSAGE.format(number=1)).locator(".chat-author")).to_have_text("Bot 1")
    say(bo, "Thanks, you too!")
    for page in (ann, bo, host):
        shown(page, 2, 2, "Thanks, you too!")
    expect(ann.locator("#chat textarea")).to_have_value("")

    # Bo's stream, cut, comes back from the last position it showed + 1: nothing twice.
    before = bo.get_attribute("#chat", "data-connections")
    with bo.expect_request(lambda r: r.url.endswith(WATCH_CHAT)) as reconnection:
        bo.evaluate("window.shikokuChat.dropStream()")
    expect(bo.locator("#chat")).not_to_have_attribute("data-connections", before or "")
    body = reconnection.value.post_data_buffer
    assert body is not None and json.loads(body[5:])["fromPosition"] == "3"
    say(host, "Welcome to the table.")
    for page in (ann, bo):
        shown(page, 3, 0, "Welcome to the table.")
    say(ann, "Bo, you are going down")

    # Only the host's page offers Hide.
    expect(ann.locator("#chat button[data-control='hide']")).to_have_count(0)
    host.locator(MESSAGE.format(number=4)).locator("button[data-control='hide']").click()
    for page in (ann, bo, host):
        shown(page, 4, 1, "hidden by the host", hidden=True)
    expect(host.locator(MESSAGE.format(number=4)).locator("button")).to_have_count(0)

    # A spectator reads it all, as it stands, and cannot speak.
    spectator_context = chromium.new_context(viewport=VIEWPORT)
    try:
        spectator = spectator_context.new_page()
        open_page(spectator, web_system, table.game_id)
        shown(spectator, 1, 1, "Good luck, everyone!")
        shown(spectator, 4, 1, "hidden by the host", hidden=True)
        expect(spectator.locator("#chat form[data-control='chat']")).to_have_count(0)
    finally:
        spectator_context.close()

    # Characters are counted as the server counts them: a train is one, not two.
    ann.locator("#chat textarea").fill("🚂" * 500)
    expect(ann.locator("#chat .chat-left")).to_have_attribute("data-left", "0")
    too_long = "x" * 501
    ann.locator("#chat textarea").fill(too_long)
    expect(ann.locator("#chat .chat-left")).to_have_attribute("data-left", "-1")
    ann.locator("#chat button[data-control='chat-send']").click()
    error = ann.locator("#error")
    expect(error).to_have_attribute("data-reason", "MESSAGE_TOO_LONG")
    expect(error).to_contain_text("at most 500 characters")
    expect(ann.locator("#chat textarea")).to_have_value(too_long)  # kept, to shorten
    expect(bo.locator("#chat .chat-message")).to_have_count(4)

    say(ann, "Sorry, Bo. Good game so far.")
    shown(bo, 5, 1, "Sorry, Bo. Good game so far.")
    expect(error).to_have_text("")  # the chat's refusal goes once a message is said
    ann.locator("#chat textarea").fill("Shall we trade the Iyo share?")
    screenshots.take(ann, "chat")
