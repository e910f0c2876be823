# frozen_string_literal: true

# The 18xx.games site engine under bench/bench_site.py: one long-lived process per Ruby mode
# (with or without --yjit), timed in CPU, taking turns with the Python side.
#
#   ENGINE_LOG_LEVEL=4 ruby [--yjit] -I <tobymao/18xx>/lib -I <jarmo/require_all>/lib \
#     bench/site_engine.rb GAME.json N,N,...
#
# Loads the engine (lib/engine of a checkout of github.com/tobymao/18xx, which needs the
# require_all gem), prepares what the site's database would hold at each move N given, warms up
# (every measurement once, untimed) and prints one line of JSON: `ready`, the Ruby, whether
# YJIT is on, the engine's require time. Then, for each line `round K` on stdin, measures and
# prints one line of JSON:
#
# - `replay`: the CPU seconds of Engine::Game.load of the whole export (parsed beforehand, as
#   our replay is handed a parsed export too);
# - `request`: for each N, the CPU seconds of the site's request path to accept action N+1 of
#   the export at move N, as its server's POST /api/game/<id>/action runs it (routes/game.rb):
#   the N stored actions parsed from their JSON (the site keeps each in a jsonb column, which
#   its database layer parses row by row, and adds the row's id, user and created_at:
#   models/action.rb), the posted body parsed, Engine::Game.load of the game with those
#   actions, the acting users, process_action(params, validate_auto_actions: true), the new
#   action's hash and its JSON to store, and the game's new round, turn, acting users and
#   result. Left out: the database's own work (the query, the insert, the advisory lock), the
#   HTTP server, the publishing of the move.
#
# A line `quit`, or the end of stdin, ends it. CPU time: CLOCK_PROCESS_CPUTIME_ID (every thread
# of this process). Before each measurement the garbage collector runs untimed, as the Python
# side collects before each of its in-process measurements.

require 'set' # Ruby 3.1: the engine uses Set before requiring it
require 'json'

def cpu
  Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
end

def wall
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

path = ARGV.fetch(0)
moves = ARGV.fetch(1).split(',').map { |n| Integer(n) }

required_at = wall
require 'engine'
require_seconds = wall - required_at

text = File.read(path)
export = JSON.parse(text)
all_actions = export.fetch('actions')
game_data = export.except('actions') # the game's row; its actions come from their own table
moves.each do |n|
  raise ArgumentError, "move #{n}: the export has #{all_actions.size} actions" unless n < all_actions.size
end

# Which user the site's row names for each action: the acting player's (the engine's own
# check then finds nothing to say), from one replay action by action, untimed.
users = []
stepping = Engine::Game.load(game_data, actions: [])
all_actions.each do |action|
  entity = stepping.get(action['entity_type'], action['entity'])
  users << (entity&.player&.id || stepping.active_players_id.first)
  stepping = stepping.process_action(action)
  raise "action #{action['id']}: #{stepping.exception}" if stepping.exception
end

# A row of the site's actions table: its jsonb text (without the columns kept beside it), and
# those columns.
Row = Struct.new(:json, :action_id, :user_id, :created_at)
SKIPPED_KEYS = %w[id user created_at meta _client_id].freeze
rows = all_actions.each_with_index.map do |action, index|
  Row.new(JSON.generate(action.except(*SKIPPED_KEYS)), index + 1, users[index],
          Integer(action['created_at'] || 1_588_000_000))
end
# What a player's browser posts for action N+1 (its client has processed it already).
bodies = all_actions.map { |action| JSON.generate(action.except('user', 'created_at')) }

def accept(game_data, rows, body, n)
  actions = rows.first(n).map do |row|
    JSON.parse(row.json).merge('id' => row.action_id, 'user' => row.user_id, 'created_at' => row.created_at)
  end
  params = JSON.parse(body)
  engine = Engine::Game.load(game_data, actions: actions)
  before = engine.active_players_id
  params['user'] = rows[n].user_id
  engine = engine.process_action(params, validate_auto_actions: true)
  raise "move #{n}: #{engine.exception}" if engine.exception

  action = engine.raw_actions.last.to_h
  stored = JSON.generate(action.except(*SKIPPED_KEYS))
  state = [engine.round.name, engine.turn, engine.active_players_id - before, engine.finished,
           engine.finished ? engine.result : {}]
  [stored, state]
end

def replay(text)
  document = JSON.parse(text) # outside the timing
  GC.start
  started = cpu
  game = Engine::Game.load(document)
  [cpu - started, game]
end

def request(game_data, rows, bodies, n)
  GC.start
  started = cpu
  accept(game_data, rows, bodies[n], n)
  cpu - started
end

# Warming up, untimed: every measurement once.
_seconds, game = replay(text)
moves.each { |n| request(game_data, rows, bodies, n) }

yjit = defined?(RubyVM::YJIT) && RubyVM::YJIT.respond_to?(:enabled?) && RubyVM::YJIT.enabled?
$stdout.sync = true
puts JSON.generate(
  {
    ready: true,
    ruby: RUBY_VERSION,
    yjit: yjit ? true : false,
    require_seconds: require_seconds,
    actions: game.actions.size,
    finished: game.finished,
    result: game.result.transform_keys(&:to_s),
  }
)

$stdin.each_line do |line|
  command, round = line.split
  break if command == 'quit'
  raise ArgumentError, "unknown command #{line.inspect}" unless command == 'round'

  replay_seconds, = replay(text)
  requests = moves.to_h { |n| [n.to_s, request(game_data, rows, bodies, n)] }
  puts JSON.generate({ round: Integer(round), replay: replay_seconds, request: requests })
end
