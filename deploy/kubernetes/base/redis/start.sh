#!/bin/sh
# Starts one node of the Redis Cluster. A node keeps the cluster's membership in
# /data/nodes.conf, addressed by pod IP, and pod IPs change when pods are rescheduled: each node
# announces a stable name too (cluster-announce-hostname, REDIS_HOSTNAME), which nodes.conf
# records, and before starting this script re-resolves every name there to its pod's current
# IP. So the cluster comes back even when all of its pods restart at once.
set -eu

conf=${REDIS_NODES_CONF:-/data/nodes.conf}
if [ -s "$conf" ]; then
    : >"$conf.new"
    while IFS= read -r line; do
        # <id> <ip>:<port>@<bus port>[,<hostname>[,<aux>...]] <flags> ...
        address=$(printf '%s\n' "$line" | cut -d' ' -f2)
        name=$(printf '%s\n' "$address" | cut -s -d, -f2)
        case "$name" in *=*) name="" ;; esac
        ip=""
        if [ -n "$name" ]; then
            ip=$(getent hosts "$name" | awk 'NR == 1 { print $1 }') || ip=""
        fi
        case "$line" in
            *myself*) ip="$POD_IP" ;;
        esac
        if [ -n "$ip" ] && [ "${address#*:}" != "$address" ]; then
            printf '%s\n' "$line" | awk -v ip="$ip" '{ sub(/^[^@]*:/, ip ":", $2); print }' >>"$conf.new"
        else
            printf '%s\n' "$line" >>"$conf.new"
        fi
    done <"$conf"
    mv "$conf.new" "$conf"
fi

exec redis-server /etc/redis/redis.conf \
    --cluster-announce-ip "$POD_IP" \
    --cluster-announce-hostname "$REDIS_HOSTNAME" \
    "$@"
