"""Turn notifications: players' webhooks (targets), the guard that keeps them off private
networks, the messages they are sent, and the notifier process that sends them (shell/)."""
