# One image for web, worker, beat and the sandbox; docker-compose.yml picks the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

COPY . .
# collectstatic needs settings to import; the values here are build-time placeholders only.
RUN DJANGO_ENV=development python manage.py collectstatic --noinput -v 0

RUN useradd --create-home app && mkdir -p /app/var && chown -R app /app/var
USER app

EXPOSE 8000
CMD ["gunicorn", "marketplace.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4"]
