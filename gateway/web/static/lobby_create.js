// The create-a-table form (#create-form) as a LobbyService.CreateTable request: every option
// of TableOptions a player chooses (not trust_submitted_revenue, which is for replaying old
// logs). The clock's fields count only when its box is ticked.
export function createRequest(form) {
  const number = (name) => Number(form[name].value) || 0;
  const options = {
    rulesProfile: form.rules_profile.value,
    beginnerGame: form.beginner_game.checked,
    fixedSeatOrder: form.fixed_seat_order.checked,
    undoAllowed: form.undo_allowed.checked,
    closedToSpectators: form.closed_to_spectators.checked,
    spectatorDelayActions: number("spectator_delay_actions"),
  };
  if (form.clock.checked)
    options.clock = {
      bankSeconds: Math.round(number("bank_minutes") * 60),
      incrementSeconds: number("increment_seconds"),
      policy: form.clock_policy.value,
    };
  return {
    seatCount: number("seat_count"),
    displayName: form.display_name.value.trim(),
    options,
  };
}

// The clock's fields are offered only with the clock ticked.
export function wireClock(form) {
  const follow = () => {
    for (const name of ["bank_minutes", "increment_seconds", "clock_policy"])
      form[name].disabled = !form.clock.checked;
  };
  form.clock.addEventListener("change", follow);
  follow();
}
