from env.base import Env
from env.python import FlaskEnv, GinEnv

all_envs: list[Env] = [FlaskEnv, GinEnv]
