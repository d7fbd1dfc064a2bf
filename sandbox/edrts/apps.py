from django.apps import AppConfig


class EdrtsConfig(AppConfig):
    name = "sandbox.edrts"
    label = "sandbox_edrts"
    verbose_name = "Platform sandbox: Event-Driven Sync (EDRTS)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from sandbox.common import pages, resets
        from sandbox.edrts import page, state
        from sandbox.edrts.models import EdrtsFieldStamp, EdrtsJob

        resets.register(
            "edrts",
            data_models=[EdrtsFieldStamp, EdrtsJob],
            memory_reset=state.reset,
        )
        pages.db_section_register("edrts", page.db_section)
