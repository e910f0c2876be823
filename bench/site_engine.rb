# frozen_string_literal: true

# Times the 18xx.games site engine replaying one export, for bench/bench_load.py.
#
#   ENGINE_LOG_LEVEL=4 ruby -I <tobymao/18xx>/lib -I <jarmo/require_all>/lib \
#     bench/site_engine.rb GAME.json [RUNS]
#
# Loads the engine (lib/engine of a checkout of github.com/tobymao/18xx, which needs the
# require_all gem), replays the export once untimed (warming up), then RUNS times (default 5):
# parses the export afresh and times Engine::Game.load on the parsed document alone. Prints one
# line of JSON: the seconds of each timed load, the seconds the engine took to require, and what
# the last replay ended with.

require 'set' # Ruby 3.1: the engine uses Set before requiring it
require 'json'

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

path = ARGV.fetch(0)
runs = Integer(ARGV.fetch(1, '5'))

required_at = now
require 'engine'
require_seconds = now - required_at

text = File.read(path)
Engine::Game.load(JSON.parse(text)) # warming up, untimed
seconds = []
game = nil
runs.times do
  document = JSON.parse(text) # outside the timing: our replay is handed a parsed export too
  started = now
  game = Engine::Game.load(document)
  seconds << (now - started)
end

puts JSON.generate(
  {
    ruby: RUBY_VERSION,
    require_seconds: require_seconds,
    load_seconds: seconds,
    actions: game.actions.size,
    finished: game.finished,
    result: game.result.transform_keys(&:to_s),
  }
)
