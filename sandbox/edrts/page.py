"""EDRTS on the pages: a section of the database page (jobs queued/processed, the latest
batches, the products EDRTS wrote with their ``mp_*`` fields and who set them last) and a
page of its own with every product of the database, paged."""

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string

from sandbox.edrts import inspection
from sandbox.edrts.models import EdrtsJob
from sandbox.records.databases.models import CatalogDatabase

SECTION_PRODUCTS = 20
SECTION_JOBS = 10
PAGE_PRODUCTS = 100


def _context(db: CatalogDatabase, *, products: dict) -> dict:
    fields: list[str] = []
    for product in products["products"]:
        fields.extend(f for f in product["fields"] if f not in fields)
    rows = [
        {"id": p["id"], "cells": [p["fields"].get(f) for f in fields]} for p in products["products"]
    ]
    return {
        "db": db,
        "stats": inspection.stats(db.id),
        "jobs": [
            inspection.job_json(j)
            for j in EdrtsJob.objects.filter(db=db).defer("payload").order_by("-id")[:SECTION_JOBS]
        ],
        "fields": fields,
        "rows": rows,
        "total": products["total"],
    }


def db_section(request: HttpRequest, db_id: int) -> str:
    db = CatalogDatabase.objects.filter(id=db_id).first()
    if db is None or not EdrtsJob.objects.filter(db=db).exists():
        return ""
    products = inspection.products_json(
        db=db, page=1, per_page=SECTION_PRODUCTS, edrts_only=True, key=None
    )
    return render_to_string(
        "sandbox_edrts/section.html", {**_context(db, products=products), "in_section": True}
    )


def db_page(request: HttpRequest, db_id: int) -> HttpResponse:
    db = get_object_or_404(CatalogDatabase.objects.select_related("account"), id=db_id)
    number = Paginator(range(db.rows.count()), PAGE_PRODUCTS).get_page(request.GET.get("page"))
    products = inspection.products_json(
        db=db, page=number.number, per_page=PAGE_PRODUCTS, edrts_only=False, key=None
    )
    return render(
        request, "sandbox_edrts/db.html", {**_context(db, products=products), "page": number}
    )
