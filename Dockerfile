# One image for web, worker, beat and the sandbox; docker-compose.yml picks the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

COPY . .
# collectstatic runs with the production settings, so it writes the manifest that
# production's static file storage reads (without it every page fails). Settings need
# values to import: these are public placeholders for this one command, not kept in the
# image; the real ones come from the environment at run time.
RUN DJANGO_ENV=production SECRET_KEY=build-time-placeholder-not-used-at-run-time \
    ALLOWED_HOSTS=localhost DATABASE_URL=sqlite:////tmp/build.sqlite3 \
    REDIS_URL=redis://localhost:6379/0 APP_BASE_URL=http://localhost \
    PLATFORM_BASE_URL=http://localhost/api/v1 PLATFORM_CLIENT_ID=build \
    PLATFORM_CLIENT_SECRET=build EMAIL_URL=smtp://localhost \
    TOKEN_ENCRYPTION_KEYS=YnVpbGQtdGltZS1vbmx5LW5vdC1hLXNlY3JldC1rZXk= \
    python manage.py collectstatic --noinput -v 0

# var/feeds exists in the image so compose's named volume there starts owned by app.
RUN useradd --create-home app && mkdir -p /app/var/feeds && chown -R app /app/var
USER app

EXPOSE 8000
CMD ["gunicorn", "marketplace.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4"]
