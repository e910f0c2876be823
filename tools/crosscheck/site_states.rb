# frozen_string_literal: true

# Replays one 18xx.games export on the site's own engine, action by action, and writes the
# site's state after every action (the format of shared/fixtures/18xx.games/1889/*.states.jsonl).
#
#   ENGINE_LOG_LEVEL=4 ruby -I <tobymao/18xx>/lib -I <jarmo/require_all>/lib \
#     tools/crosscheck/site_states.rb GAME.json STATES.jsonl
#
# The game is built with no actions and strict (as a live game validates each action), then
# the export's actions are processed one at a time with the engine's own loop
# (Game::Base#process_to_action, which honours undo/redo and keeps the log's action ids), so
# the whole replay is linear. One JSON line per state goes to STATES.jsonl: id 0 before the
# first action, then one per processed action, up to the first one the engine refuses. One
# JSON object goes to stdout: whether every action was accepted as it is ("accepted"), the
# refused action's id and the engine's message if not, and the final result.

require 'set' # Ruby 3.1: the engine uses Set before requiring it
require 'json'
require 'engine'

def share_percents(holder, corporations)
  corporations.each_with_object({}) do |corporation, percents|
    percent = holder.percent_of(corporation)
    percents[corporation.name] = percent if percent.positive?
  end
end

# A player by id, a corporation or company by name (as the recorded states name them).
def entity_name(entity)
  return nil unless entity

  (entity.player? ? entity.id : entity.name).to_s
end

# Actions every step of every round lists whatever the position: chat, programs, ending the
# game by agreement. They say nothing of what the game waits on.
ALWAYS_OFFERED = %w[message log end_game undo redo].freeze

# What the site offers the entity that must act (game.current_entity): the action types its
# round's active steps give it (Round::Base#actions_for, as a live game asks them), sorted,
# without those of ALWAYS_OFFERED and the programs, with `bankrupt` only where the engine's
# own test lets the entity's president go bankrupt (Step::Bankrupt lists it at every
# corporation's turn and checks only when it is processed), and `bid` only where a bid is
# possible (bid_possible?). Empty once the game is over.
def offers(game)
  return [] if game.finished

  entity = game.current_entity
  types = game.round.actions_for(entity).map(&:to_s)
  types.reject! { |type| ALWAYS_OFFERED.include?(type) || type.start_with?('program_') }
  types.delete('bankrupt') unless entity&.corporation? &&
                                  game.can_go_bankrupt?(game.acting_for_entity(entity.owner), entity)
  types.delete('bid') unless bid_possible?(game.round.active_step, entity)
  types.sort
end

# The auction's step lists `bid` to every player in turn; a bid is possible only where one of
# its privates' lowest bid is within what the player has not promised (its own min_bid and
# max_bid, which validate a bid): while a private is auctioned among its bidders, that one.
def bid_possible?(step, entity)
  return true unless step.respond_to?(:companies) && step.respond_to?(:min_bid) && entity&.player?

  auctioned = step.respond_to?(:auctioning, true) ? step.send(:auctioning) : nil
  (auctioned ? [auctioned] : step.companies).any? do |company|
    (low = step.min_bid(company)) && low <= step.max_bid(entity, company)
  end
end

def state(game, players, action)
  corporations = game.corporations
  line = {
    'id' => action ? action['id'] : 0,
    'round' => game.round.name,
    'turn' => game.turn,
    'round_num' => game.round.round_num,
    'phase' => game.phase.name,
    'bank' => game.bank.cash,
    'player_order' => game.players.map { |p| p.id.to_s },
    'players' => players.to_h do |player|
      [player.id.to_s, {
        'cash' => player.cash,
        'shares' => share_percents(player, corporations),
        'companies' => player.companies.map(&:sym),
      }]
    end,
    'corps' => corporations.to_h do |corporation|
      [corporation.name, {
        'cash' => corporation.cash,
        'price' => corporation.share_price&.price,
        'trains' => corporation.trains.map(&:name),
        'tokens' => corporation.tokens.count(&:used),
        'ipo' => corporation.percent_of(corporation),
        'floated' => corporation.floated?,
        'companies' => corporation.companies.map(&:sym),
      }]
    end,
    'pool' => share_percents(game.share_pool, corporations),
    'finished' => game.finished,
    'next' => entity_name(game.current_entity),
    'priority' => entity_name(game.send(:priority_deal_player)), # private in Game::Base
    'offers' => offers(game),
  }
  line['type'] = action['type'] if action
  line
end

path, states_path = ARGV
abort 'usage: site_states.rb GAME.json STATES.jsonl' unless path && states_path

data = JSON.parse(File.read(path))
actions = data['actions'] || []
game = Engine::Game.load(data, actions: [], strict: true)
filtered, = game.class.filtered_actions(actions)
game.instance_variable_set(:@filtered_actions, filtered)
game.instance_variable_set(:@raw_all_actions, actions)
players = game.players.dup # the export's order; game.players follows the seating as it changes

refused = nil
processed = 0
File.open(states_path, 'w') do |out|
  out.puts(JSON.generate(state(game, players, nil)))
  actions.each_with_index do |action, index|
    begin
      game.process_to_action(action['id'])
    rescue StandardError => e # the engine rescues its own errors; anything else refuses too
      game.instance_variable_set(:@exception, e)
    end
    if game.exception
      refused = { 'action_id' => action['id'], 'action' => action,
                  'exception' => "#{game.exception.class}: #{game.exception.message}" }
      break
    end
    processed += 1
    out.puts(JSON.generate(state(game, players, action))) if filtered[index]
  end
end

puts JSON.generate(
  {
    'accepted' => refused.nil?,
    'refused' => refused,
    'actions' => processed,
    'finished' => game.finished,
    'game_end_reason' => game.game_end_reason&.to_s,
    'result' => game.finished ? game.result.transform_keys(&:to_s) : {},
  }
)
