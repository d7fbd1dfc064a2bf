"""What ships beside the app to run it: docker-compose and the monitoring rules."""
