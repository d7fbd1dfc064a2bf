"""The Platform API's exports of a database: settings, schedule (cron), runs that write the
file exactly as the settings say and deliver it over real HTTP, with logs and kept files."""
