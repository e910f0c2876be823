#!/bin/sh
# Makes the nodes of REDIS_NODES ("host:port host:port ...") one Redis Cluster with
# REDIS_CLUSTER_REPLICAS replicas per master, and may be run again at any time: the first run
# creates the cluster; a later one leaves it as it is, but for adding, as replicas, nodes that
# came back empty (a pod whose volume was lost); then it checks the cluster and fails if the
# slots are not all served.
set -eu

replicas=${REDIS_CLUSTER_REPLICAS:-1}

# The node's address with its name resolved (redis-cli --cluster wants addresses).
resolve() {
    host=${1%:*}
    port=${1##*:}
    case "$host" in
        *[!0-9.]*) ip=$(getent hosts "$host" | awk 'NR == 1 { print $1 }') || ip="" ;;
        *) ip=$host ;;
    esac
    [ -n "$ip" ] && printf '%s:%s\n' "$ip" "$port"
}

# One field of CLUSTER INFO of node ip:port.
info() {
    redis-cli -h "${1%:*}" -p "${1##*:}" cluster info | tr -d '\r' | sed -n "s/^$2://p"
}

# Whether node ip:port is in no cluster: knows only itself and serves no slot.
alone() {
    [ "$(info "$1" cluster_known_nodes)" = 1 ] && [ "$(info "$1" cluster_slots_assigned)" = 0 ]
}

addresses=""
for node in $REDIS_NODES; do
    until address=$(resolve "$node") \
        && [ "$(redis-cli -h "${address%:*}" -p "${address##*:}" ping 2>/dev/null)" = PONG ]; do
        echo "waiting for $node"
        sleep 2
    done
    addresses="$addresses $address"
done

member=""
for address in $addresses; do
    slots=$(info "$address" cluster_slots_assigned) || slots=0
    if [ "${slots:-0}" -gt 0 ]; then
        member=$address
        break
    fi
done

if [ -z "$member" ]; then
    echo "creating the cluster of$addresses with $replicas replica(s) per master"
    # shellcheck disable=SC2086 # one argument per address
    redis-cli --cluster create $addresses --cluster-replicas "$replicas" --cluster-yes
    member=${addresses# }
    member=${member%% *}
else
    echo "the cluster exists (through $member)"
    added=""
    # shellcheck disable=SC2086 # the nodes' names, in the order of their addresses
    set -- $REDIS_NODES
    for address in $addresses; do
        name=${1%:*}
        shift
        if alone "$address"; then
            echo "adding $address ($name), which came back empty, as a replica"
            tries=0
            # Refused while the others still take the address for the node it was: retry until
            # they agree.
            until redis-cli --cluster add-node "$address" "$member" --cluster-slave; do
                tries=$((tries + 1))
                if [ "$tries" -ge 30 ]; then
                    echo "could not add $address to the cluster" >&2
                    exit 1
                fi
                sleep 2
                alone "$address" || break
            done
            added="$added $name"
        fi
    done
    # The node each of those was before it lost its volume is gone for good: forget it (found
    # by the name it announced, or, where it had none, by having lost its address to the new).
    if [ -n "$added" ]; then
        redis-cli -h "${member%:*}" -p "${member##*:}" cluster nodes | awk -v names="$added" '
            BEGIN { n = split(names, list, " "); for (i = 1; i <= n; i++) readded[list[i]] = 1 }
            {
                split($2, address, ",")
                if ($3 ~ /noaddr/ || ($3 ~ /fail/ && $3 !~ /myself/ && address[2] in readded))
                    print $1
            }' |
            while read -r gone; do
                echo "forgetting $gone, a node that came back as another"
                redis-cli --cluster call "$member" cluster forget "$gone" >/dev/null || true
            done
    fi
fi

# The slots' owners reach every node by gossip within seconds of a change.
tries=0
until redis-cli --cluster check "$member"; do
    tries=$((tries + 1))
    if [ "$tries" -ge 30 ]; then
        echo "the cluster is not whole: see redis-cli --cluster check $member" >&2
        exit 1
    fi
    sleep 2
done
